//! The kernels' images that the CUDA backend loads: for each module of the
//! ABI ([`abi::Module`]), machine code (cubin) for the architectures it was
//! assembled for, and PTX for the rest. Written into the library by
//! `build.rs` (see there for where they come from).
//!
//! A device runs the machine code of its own major architecture and a minor
//! version not above its own (an sm_80 cubin runs on an sm_86 GPU); failing
//! that, the newest PTX not newer than the device, which the driver compiles
//! when the module is loaded (and caches on disk). Loading machine code takes
//! milliseconds; compiling PTX about 0.1 s per kernel on an H100.

use crate::error::{Error, Result};
use kernels_gpu::abi::Module;

/// One architecture's images of every module.
#[derive(Debug)]
pub(crate) struct KernelImage {
    /// Compute capability × 10 (`sm_<arch>`).
    pub arch: u32,
    /// Machine code for exactly this architecture's major version; else PTX.
    pub cubin: bool,
    /// xz-compressed (the shipped images) or not (built from source).
    pub compressed: bool,
    /// `(module file stem, image)` for every module of the ABI.
    pub modules: &'static [(&'static str, &'static [u8])],
}

/// Every image set; written by `build.rs`.
const IMAGES: &[KernelImage] = include!(concat!(env!("OUT_DIR"), "/kernel_images.rs"));

/// The environment variable that pins the PTX architecture (`sm_70`, `sm_90`):
/// the PTX is then loaded even where machine code exists, so the code for
/// older GPUs, and the driver's compilation, can be tested on a newer GPU
/// (PTX is forward compatible: the driver compiles sm_70 PTX for any later
/// GPU).
pub(crate) const PTX_ARCH_VARIABLE: &str = "REDUCE_PTX_ARCH";

/// What a module is loaded from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Image {
    /// Machine code, loaded as it is.
    Cubin(&'static KernelImage),
    /// PTX, which the driver compiles.
    Ptx(&'static KernelImage),
}

impl Image {
    /// The images to load on a `major.minor` device: its machine code, or the
    /// newest PTX it runs; only the PTX [`PTX_ARCH_VARIABLE`] names if set.
    pub(crate) fn for_device(major: u32, minor: u32) -> Result<Image> {
        let forced = std::env::var(PTX_ARCH_VARIABLE).ok();
        Image::choose(IMAGES, major, minor, forced.as_deref(), true)
    }

    /// The newest PTX a `major.minor` device runs (to fall back on where its
    /// machine code does not load).
    pub(crate) fn ptx_for_device(major: u32, minor: u32) -> Result<Image> {
        Image::choose(IMAGES, major, minor, None, false)
    }

    fn choose(
        images: &'static [KernelImage],
        major: u32,
        minor: u32,
        forced_ptx: Option<&str>,
        machine_code: bool,
    ) -> Result<Image> {
        let cc = major.saturating_mul(10).saturating_add(minor);
        let ptx = images.iter().filter(|image| !image.cubin && image.arch <= cc);
        if let Some(forced) = forced_ptx {
            return ptx
                .clone()
                .find(|image| format!("sm_{}", image.arch) == forced)
                .map(Image::Ptx)
                .ok_or_else(|| {
                    let built: Vec<String> = images
                        .iter()
                        .filter(|image| !image.cubin)
                        .map(|image| format!("sm_{}", image.arch))
                        .collect();
                    Error::InvalidPolicy(format!(
                        "{PTX_ARCH_VARIABLE}={forced} is not one of the PTX architectures {built:?} that this compute capability {major}.{minor} device runs"
                    ))
                });
        }
        let cubin = images
            .iter()
            .filter(|image| machine_code && image.cubin && image.arch / 10 == major && image.arch <= cc)
            .max_by_key(|image| image.arch);
        match cubin {
            Some(image) => Ok(Image::Cubin(image)),
            None => ptx
                .max_by_key(|image| image.arch)
                .map(Image::Ptx)
                .ok_or(Error::UnsupportedDevice { major, minor }),
        }
    }

    /// The image's architecture (`sm_<arch>`) and whether it is machine code.
    pub(crate) fn describe(self) -> String {
        match self {
            Image::Cubin(image) => format!("sm_{} machine code", image.arch),
            Image::Ptx(image) => format!("sm_{} PTX", image.arch),
        }
    }

    /// `module`'s image, decompressed: machine code, or PTX text ending in a
    /// nul (as the driver reads it).
    pub(crate) fn module(self, module: Module) -> Result<Vec<u8>> {
        let (Image::Cubin(set) | Image::Ptx(set)) = self;
        let stem = module.to_string();
        let broken = |problem: String| Error::BrokenModule {
            module: stem.clone(),
            image: self.describe(),
            problem,
        };
        let bytes = set
            .modules
            .iter()
            .find(|(name, _)| *name == stem)
            .map(|(_, bytes)| *bytes)
            .ok_or_else(|| broken("not among the images".to_string()))?;
        let mut image = if set.compressed {
            let mut decompressed = Vec::new();
            lzma_rs::xz_decompress(&mut std::io::BufReader::new(bytes), &mut decompressed)
                .map_err(|e| broken(format!("cannot decompress: {e}")))?;
            decompressed
        } else {
            bytes.to_vec()
        };
        if matches!(self, Image::Ptx(_)) {
            if image.contains(&0) {
                return Err(broken("a nul in the PTX".to_string()));
            }
            image.push(0);
        }
        Ok(image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SETS: [KernelImage; 5] = [
        set(90, true),
        set(80, true),
        set(120, true),
        set(90, false),
        set(70, false),
    ];

    const fn set(arch: u32, cubin: bool) -> KernelImage {
        KernelImage {
            arch,
            cubin,
            compressed: false,
            modules: &[],
        }
    }

    fn chosen(major: u32, minor: u32, forced: Option<&str>) -> Result<(u32, bool)> {
        Image::choose(&SETS, major, minor, forced, true).map(|image| match image {
            Image::Cubin(set) => (set.arch, true),
            Image::Ptx(set) => (set.arch, false),
        })
    }

    #[test]
    fn machine_code_of_the_same_major_version_else_the_newest_ptx() {
        assert_eq!(chosen(9, 0, None).unwrap(), (90, true));
        assert_eq!(chosen(8, 0, None).unwrap(), (80, true));
        assert_eq!(chosen(8, 9, None).unwrap(), (80, true), "sm_80 code runs on 8.x");
        assert_eq!(chosen(12, 1, None).unwrap(), (120, true));
        assert_eq!(chosen(10, 0, None).unwrap(), (90, false), "no sm_100 code: PTX");
        assert_eq!(chosen(7, 5, None).unwrap(), (70, false));
        assert!(matches!(
            Image::choose(&SETS, 9, 0, None, false),
            Ok(Image::Ptx(KernelImage { arch: 90, .. }))
        ));
        assert!(matches!(
            chosen(6, 1, None),
            Err(Error::UnsupportedDevice { major: 6, minor: 1 })
        ));
    }

    #[test]
    fn the_variable_pins_a_ptx_the_device_runs() {
        assert_eq!(chosen(9, 0, Some("sm_90")).unwrap(), (90, false));
        assert_eq!(chosen(9, 0, Some("sm_70")).unwrap(), (70, false));
        assert!(matches!(chosen(8, 0, Some("sm_90")), Err(Error::InvalidPolicy(_))));
        assert!(matches!(chosen(9, 0, Some("sm_80")), Err(Error::InvalidPolicy(_))));
    }

    #[test]
    fn every_module_of_every_image_is_there_and_holds_its_kernels() {
        use kernels_gpu::abi::Kernel;
        assert!(IMAGES.iter().any(|set| !set.cubin), "no PTX");
        for set in IMAGES {
            let image = if set.cubin { Image::Cubin(set) } else { Image::Ptx(set) };
            for module in Module::all() {
                if set.cubin && module.is_user() {
                    assert!(image.module(module).is_err(), "machine code of the PTX-only {module}");
                    continue;
                }
                let bytes = image.module(module).unwrap();
                if set.cubin {
                    assert_eq!(bytes.get(..4), Some(&b"\x7fELF"[..]), "{module} {}", image.describe());
                    continue;
                }
                let text = std::str::from_utf8(bytes.strip_suffix(&[0]).unwrap()).unwrap();
                assert!(text.contains(&format!(".target sm_{}", set.arch)));
                let expected: Vec<&str> = Kernel::all()
                    .filter(|(kernel, _)| kernel.module() == module)
                    .map(|(_, name)| name)
                    .collect();
                for name in &expected {
                    assert!(text.contains(&format!(".entry {name}(")), "{name} not in {module}");
                }
                assert_eq!(text.matches(".entry ").count(), expected.len(), "{module}");
            }
        }
    }

    /// Every user module of the oldest and the newest PTX, with an operator
    /// of its element type spliced in as the GPU backend does, assembles
    /// (ptxas of `scripts/build_kernels.sh`, where installed): the shipped
    /// PTX declares no user function, and every call of one is inlined.
    #[test]
    fn ptxas_assembles_every_user_module_with_an_operator() {
        use crate::user::program::{compile, splice};
        use crate::user::{Operator, Scalar, Value};
        struct Sum;
        impl<T: Scalar + Default> Operator<T> for Sum {
            fn identity(&self) -> T {
                T::default()
            }
            fn combine<V: Value<T>>(&self, a: V, b: V) -> V {
                a + b
            }
            fn map<V: Value<T>>(&self, x: V) -> V {
                x * x
            }
        }
        let Some(ptxas) = crate::user::tests::ptxas() else {
            println!("skipped ptxas_assembles_every_user_module_with_an_operator: no ptxas in .ptxas/ (scripts/build_kernels.sh installs it)");
            return;
        };
        let programs = [
            ("_i32", compile::<i32, _>(Sum).unwrap().0),
            ("_u32", compile::<u32, _>(Sum).unwrap().0),
            ("_i64", compile::<i64, _>(Sum).unwrap().0),
            ("_u64", compile::<u64, _>(Sum).unwrap().0),
            ("_f32", compile::<f32, _>(Sum).unwrap().0),
            ("_f64", compile::<f64, _>(Sum).unwrap().0),
        ];
        let ptx_sets: Vec<&KernelImage> = IMAGES.iter().filter(|set| !set.cubin).collect();
        let oldest = ptx_sets.iter().min_by_key(|set| set.arch).unwrap();
        let newest = ptx_sets.iter().max_by_key(|set| set.arch).unwrap();
        let dir = std::env::temp_dir().join(format!("reduce-user-modules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for set in [oldest, newest] {
            for module in Module::all().into_iter().filter(|m| m.is_user()) {
                let name = module.to_string();
                let (_, program) = programs.iter().find(|(suffix, _)| name.ends_with(suffix)).unwrap();
                let bytes = Image::Ptx(set).module(module).unwrap();
                let text = std::str::from_utf8(bytes.strip_suffix(&[0]).unwrap()).unwrap();
                assert!(!text.contains(".extern .func"), "{name} declares a function");
                let spliced = splice(text, program).unwrap();
                assert!(spliced.contains("%uop_v"), "{name}: nothing inlined");
                assert!(
                    !spliced.contains("call.uni (retval0), user_op_"),
                    "{name}: a call was not inlined"
                );
                let path = dir.join(format!("{name}_sm_{}.ptx", set.arch));
                std::fs::write(&path, spliced).unwrap();
                let output = std::process::Command::new(&ptxas)
                    .arg(format!("-arch=sm_{}", set.arch))
                    .args(["-o", "/dev/null"])
                    .arg(&path)
                    .output()
                    .unwrap();
                assert!(
                    output.status.success(),
                    "ptxas refused {name} for sm_{}:\n{}",
                    set.arch,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
