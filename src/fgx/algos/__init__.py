"""RL and RFT algorithms as pure functions: tensor pieces (:mod:`fgx.algos.core`), the RL
objective both engines train (:mod:`fgx.algos.objective`) and the RFT filter (:mod:`fgx.algos.rft`)."""
