"""`spudflow rehearse`: run a config offline on the path a GPU cluster takes, with tiny random
models in an offline hub cache, treebank URLs answered from a local mirror and stand-ins for the
files a user supplies (docs/running.md, "Rehearsing a config offline")."""
