//! Routing (todo).
