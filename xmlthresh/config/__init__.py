"""The run configuration outside Hydra's parser: the option catalogue, composition and resolvers, plugin discovery, seeds."""
