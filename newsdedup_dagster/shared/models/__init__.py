"""The OpenAI-compatible model client shared by the stages that ask a model: calls with backoff,
the answer cache, prices, what every prompt shares, and translation with its checks."""
