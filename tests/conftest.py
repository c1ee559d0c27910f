import os
import sys

# one intra-op thread for every library (2-core CI; see docs/benchmarks.md)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
sys.path.insert(0, os.path.dirname(__file__))  # tests/examples.py
