# vitrt.dask on a LocalCluster and on dask-scheduler/dask-worker processes (tests/python/test_dask.py, pytest).
# Skipped, with the reason printed (-rs), where the Python package is not built or the build is sanitized.
add_test(NAME python_dask
         COMMAND ${VITRT_PYTHON} -m pytest -q -rs -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR}/test_dask.py)
set_tests_properties(python_dask PROPERTIES TIMEOUT 300 ENVIRONMENT
                     "${VITRT_TEST_ENV};PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=1")
