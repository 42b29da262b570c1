"""The DAG's plan: what each job reads, writes and receives, as pure functions of the config.

One table per concept, each in its own module: ``paths`` (every artifact path pattern, written once),
``splits`` (the problem sets, each from its task family: fgx.tasks.registry), ``models`` (which model
starts from which and trains on what), ``params`` (each job's settings JSON), ``comparisons`` (which
models each comparison puts side by side) and ``figures`` (the figures' names and modules, and the form
of the declaration each figure module makes of its inputs and settings). The rules reach them through
``fgx.dag.Plan``, which also reads the figure modules' declarations. Kept free of heavy imports.
"""
