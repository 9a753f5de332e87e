"""Makes the shipped kernel images from the PTX modules of a source build.

Usage: python3 scripts/kernel_images.py PTX_DIR DEST [--check]

PTX_DIR holds `ptx_sm_<arch>/<module>.ptx` (reduce-host's build script with
the feature build-kernels writes them). DEST receives `ptx_sm_<arch>/<module>.ptx.xz`
and `cubin_sm_<arch>/<module>.cubin.xz` for every architecture of
MACHINE_CODE, each assembled from the newest PTX not newer than it. With
--check, DEST is left alone and compared with what would be written
(decompressed contents, and the set of files): exit 1 on any difference.
Called by scripts/build_kernels.sh.
"""

import concurrent.futures
import lzma
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

# The assembler: PyPI's wheel of CUDA 12.9's nvcc, whose ptxas knows every
# architecture below. Changing it changes the machine code (regenerate).
PTXAS_PACKAGE = "nvidia-cuda-nvcc-cu12==12.9.86"

# Machine code is shipped for these architectures (compute capability × 10).
# A cubin runs on GPUs of its major version and a minor version not below its
# own (sm_80 code runs on 8.0, 8.6, 8.7, 8.9), so one per major version
# covers Volta and Turing (7.x), Ampere and Ada (8.x), Hopper (9.0),
# Blackwell (10.x) and the RTX Blackwell (12.x) GPUs. Other GPUs (and newer
# major versions) get the PTX, compiled by the driver.
MACHINE_CODE = [70, 80, 90, 100, 120]

REPO = pathlib.Path(__file__).resolve().parent.parent


def ptxas() -> pathlib.Path:
    """The pinned ptxas, installed into .ptxas/ if it is not there yet."""
    venv = REPO / ".ptxas"
    python = venv / "bin" / "python3"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    marker = venv / "installed.txt"
    if not marker.exists() or marker.read_text().strip() != PTXAS_PACKAGE:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", PTXAS_PACKAGE], check=True)
        marker.write_text(PTXAS_PACKAGE + "\n")
    found = sorted(venv.glob("lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas"))
    if not found:
        sys.exit(f"kernel_images: {PTXAS_PACKAGE} installed no ptxas under {venv}")
    return found[0]


def assemble(assembler: pathlib.Path, arch: int, ptx: pathlib.Path, cubin: pathlib.Path) -> None:
    result = subprocess.run(
        [str(assembler), f"-arch=sm_{arch}", "-O3", str(ptx), "-o", str(cubin)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"ptxas -arch=sm_{arch} {ptx.name} failed:\n{result.stderr}")


def build(ptx_dir: pathlib.Path, dest: pathlib.Path) -> None:
    """Writes every image, compressed, into the empty folder `dest`."""
    ptx_arches = sorted(int(d.name.removeprefix("ptx_sm_")) for d in ptx_dir.glob("ptx_sm_*"))
    if not ptx_arches:
        sys.exit(f"kernel_images: no ptx_sm_* folders in {ptx_dir}")
    raw = dest / "raw"
    jobs = []
    for arch in ptx_arches:
        shutil.copytree(ptx_dir / f"ptx_sm_{arch}", raw / f"ptx_sm_{arch}")
    assembler = ptxas()
    for arch in MACHINE_CODE:
        source = max((a for a in ptx_arches if a <= arch), default=None)
        if source is None:
            sys.exit(f"kernel_images: no PTX older than sm_{arch} to assemble")
        (raw / f"cubin_sm_{arch}").mkdir(parents=True)
        # The user operator's modules are PTX only: the library splices the
        # operator's functions into them at run time.
        for ptx in sorted((raw / f"ptx_sm_{source}").glob("*.ptx")):
            if ptx.name.startswith("user_"):
                continue
            jobs.append((arch, ptx, raw / f"cubin_sm_{arch}" / (ptx.stem + ".cubin")))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for future in [pool.submit(assemble, assembler, *job) for job in jobs]:
            future.result()
    for image in sorted(raw.glob("*/*")):
        folder = dest / image.parent.name
        folder.mkdir(exist_ok=True)
        compressed = lzma.compress(image.read_bytes(), check=lzma.CHECK_CRC32, preset=9 | lzma.PRESET_EXTREME)
        (folder / (image.name + ".xz")).write_bytes(compressed)
    shutil.rmtree(raw)


def contents(folder: pathlib.Path) -> dict:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.glob("*/*.xz"))}


def check(built: pathlib.Path, shipped: pathlib.Path) -> int:
    new, old = contents(built), contents(shipped)
    problems = [f"missing from {shipped}: {name}" for name in sorted(new.keys() - old.keys())]
    problems += [f"in {shipped} but not built: {name}" for name in sorted(old.keys() - new.keys())]
    for name in sorted(new.keys() & old.keys()):
        if lzma.decompress(new[name].read_bytes()) != lzma.decompress(old[name].read_bytes()):
            problems.append(f"differs from the source: {name}")
    for problem in problems:
        print(f"kernel_images: {problem}", file=sys.stderr)
    if problems:
        print("kernel_images: the shipped kernels are not what the source gives; run scripts/build_kernels.sh and commit reduce-host/kernels/", file=sys.stderr)
        return 1
    print(f"kernel_images: the {len(new)} shipped images match the source")
    return 0


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--check"]
    if len(args) != 2:
        sys.exit(__doc__)
    ptx_dir, dest = pathlib.Path(args[0]), pathlib.Path(args[1])
    with tempfile.TemporaryDirectory() as temp:
        built = pathlib.Path(temp) / "kernels"
        built.mkdir()
        build(ptx_dir, built)
        if "--check" in sys.argv:
            return check(built, dest)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(built, dest)
    count = len(contents(dest))
    size = sum(p.stat().st_size for p in contents(dest).values())
    print(f"kernel_images: wrote {count} images, {size / 1e6:.1f} MB compressed, to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
