"""DepProbe structural probes on frozen LM layers (Müller-Eberstein et al. 2022; SPUD paper §5,
App. F): word features, the probe, its loss, training, tree decoding and metrics."""
