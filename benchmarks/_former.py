"""Load a module of attnstat as it was at an earlier commit (read with `git show`), importable next to the current one:
the baseline of a benchmark is then the former implementation itself, run in the same process."""
import importlib, pathlib, subprocess, sys, types

ROOT = pathlib.Path(__file__).resolve().parents[1]

def load_former(module:str, commit:str):
    "attnstat.<module> (e.g. 'slr.bayes') as it was at `commit`, registered as attnstat.<package>._former_<name>."
    package, _, name = ("attnstat." + module).rpartition(".")
    path = "/".join(("attnstat." + module).split(".")) + ".py"
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout
    full = f"{package}._former_{name}"
    mod = types.ModuleType(full); mod.__package__ = package; mod.__file__ = f"{commit[:7]}:{path}"
    sys.modules[full] = mod                        # dataclasses resolve annotations through sys.modules
    importlib.import_module(package)
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod
