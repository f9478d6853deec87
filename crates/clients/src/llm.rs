//! `crb eval`'s LLM tier predictor (moving here from the CLI).
