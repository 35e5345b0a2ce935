"""What a conformance session observes of one env, made once per session however many checks read it.

``hooks``: setup(), the training items, evaluate() and wandb_log as the env runs them; ``rollouts``: the env's
tools and the probe rollouts through the real agent loop; ``scoring``: compute_reward on those rollouts (probes,
negative controls, the env's own transcripts, gold answers); ``logs``: the log capture both hooks use.
"""
