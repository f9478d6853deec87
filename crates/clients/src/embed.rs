//! `rag`'s embedders (moving here from the CLI).
