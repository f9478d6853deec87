//! routeval's model clients: the IO edge between the pure metric and score crates and the
//! servers or commands that produce embeddings and tier predictions.
//!
//! - [`embed`]: `rag`'s embedders (an OpenAI-compatible `/v1/embeddings` server, or a
//!   line-protocol child command), implementing `routeval_retrieval_metrics::rag::Embedder`.
//! - [`command`]: models behind a command (`crb eval --predictor cmd:`, `gqr score --cmd`).
//! - [`llm`]: `crb eval`'s LLM tier predictor (an OpenAI-compatible chat server), implementing
//!   `routeval_routing_scores::crb::records::TierPredictor`.
//!
//! Every network call and child process has connect, read and overall timeouts and a reply
//! size cap (through `routeval-io`); secrets are redacted from every message.

pub mod command;
pub mod embed;
pub mod llm;
