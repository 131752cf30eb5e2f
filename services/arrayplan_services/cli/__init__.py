"""The ``arrayplan`` command line: ``main.py`` builds it from its registry of command modules.

Importing the package points numba's kernel cache at the shared directory
(``numba_cache.configure``) before any command module imports the engine: numba reads
``NUMBA_CACHE_DIR`` once, when it is imported, and the server and its Ray workers share one cache.
"""

from .. import numba_cache

numba_cache.configure()
