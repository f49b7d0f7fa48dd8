"""Make DaCe 1.0.2 use this machine's OpenBLAS for its BLAS library nodes
(MatMul, Gemm, Gemv), and the reference ScaLAPACK on Open MPI for its PBLAS
nodes (dace.distr.MatMult).

DaCe's OpenBLAS environment counts as installed only when ctypes finds both
`lapacke` and `blas`, and its generated code includes lapacke.h. Debian's
OpenBLAS here has neither LAPACKE symbols nor lapacke.h (no liblapacke-dev),
so auto_optimize's fast-library pass skips OpenBLAS and every matrix product
expands to DaCe's `pure` loops (gemm at NPBench's S: about 50 s against
NumPy's 0.7 s). Nothing here uses LAPACK, so the environment is pointed at
libopenblas alone and lapacke.h is dropped from its headers; the expansion
code (cblas_dgemm, cblas_dgemv) is DaCe's own. Call setup() before building
any SDFG; it returns a line saying what it set, for the logs."""
import ctypes.util
import os


def _openblas_path():
    name = ctypes.util.find_library("openblas")
    if not name:
        return None
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return name


_done = None


def setup():
    global _done
    if _done:
        return _done
    import dace
    from dace.libraries.blas.environments import openblas

    env = openblas.OpenBLAS
    what = []
    lib = _openblas_path()
    if lib and not env.is_installed():
        env.cmake_libraries = staticmethod(lambda: [lib])
        env.is_installed = staticmethod(lambda: True)
        env.cmake_packages = []
        env.cmake_link_flags = []
        env.headers = [h for h in env.headers if h != "lapacke.h"]
        what.append(f"BLAS: OpenBLAS ({lib}, without LAPACKE)")
    elif lib:
        what.append("BLAS: OpenBLAS (DaCe found it)")
    else:
        what.append("BLAS: no libopenblas found; DaCe's own choice")
    dace.Config.set("library", "blas", "default_implementation", value="OpenBLAS")
    dace.Config.set("library", "pblas", "default_implementation", value="ReferenceOpenMPI")
    what.append("PBLAS: ReferenceOpenMPI (libscalapack-openmpi)")
    _done = "; ".join(what)
    return _done
