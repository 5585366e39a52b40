"""Only what pyproject.toml cannot say: the dependencies and tag of a wheel that carries compiled kernels
(``tools/kernel_wheel.py`` sets ``CAROM_KERNEL_WHEEL=1``). Such a wheel's cache is valid only for the Numba,
llvmlite and Python that wrote it, and on this platform: it pins the two exactly and is tagged for them."""
import os
import sys
import sysconfig

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:                                     # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel

KERNEL_WHEEL = os.environ.get("CAROM_KERNEL_WHEEL") == "1"


def dependencies():
    if not KERNEL_WHEEL:
        return ["numpy>=1.24", "numba>=0.59"]
    import llvmlite
    import numba
    return ["numpy>=1.24", f"numba=={numba.__version__}", f"llvmlite=={llvmlite.__version__}"]


class KernelWheel(bdist_wheel):
    """A plain wheel, or (CAROM_KERNEL_WHEEL=1) one tagged cpXY-none-<platform>."""

    def finalize_options(self):
        super().finalize_options()
        if KERNEL_WHEEL:
            self.root_is_pure = False

    def get_tag(self):
        if not KERNEL_WHEEL:
            return super().get_tag()
        python = f"cp{sys.version_info[0]}{sys.version_info[1]}"
        return python, "none", sysconfig.get_platform().replace("-", "_").replace(".", "_")


package_data = {"carom": ["py.typed"]}
if KERNEL_WHEEL:
    package_data = {"": ["__pycache__/*.nbi", "__pycache__/*.nbc", "_kernels.json", "py.typed"]}

setup(install_requires=dependencies(), cmdclass={"bdist_wheel": KernelWheel}, package_data=package_data)
