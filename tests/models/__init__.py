"""Models: the engine adapters on the small shipped models, the resolver, config, doctor."""
