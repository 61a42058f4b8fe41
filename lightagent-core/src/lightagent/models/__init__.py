"""Model providers: the contract, the OpenAI-compatible client, profiles, the scripted model."""
