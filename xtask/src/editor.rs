//! The standalone editor under Xvfb: `cargo xtask screenshot` (the README's pictures, from
//! the factory state only) and `cargo xtask editor-test` (the editor driven with xdotool,
//! its screenshots measured with ImageMagick).
//!
//! Needs xvfb, xdotool, imagemagick and x11-xserver-utils, and libasound2-dev and
//! libjack-jackd2-dev for the standalone build.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The packages the commands here need.
const APT: &str = "apt-get install -y xvfb xdotool imagemagick x11-xserver-utils libasound2-dev libjack-jackd2-dev";

/// Fails with the apt line if a tool is missing.
pub fn check_tools() -> anyhow::Result<()> {
    for tool in ["Xvfb", "xdotool", "import", "convert", "compare", "xrdb"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            anyhow::bail!("`{tool}` not found: {APT}");
        }
    }
    Ok(())
}

/// Builds the release standalone; returns its path (under `CARGO_TARGET_DIR` if set).
pub fn build_standalone() -> anyhow::Result<PathBuf> {
    let mut build = super::cargo();
    build.args([
        "build",
        "--release",
        "--features",
        "standalone",
        "--bin",
        "granary-standalone",
    ]);
    super::run(build)?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    Ok(target.join("release").join("granary-standalone"))
}

/// An Xvfb display with the standalone running on it, in the factory state: a home of its
/// own (`HOME`), whose user preset folder, where a user's would be, is empty.
pub struct Session {
    pub display: String,
    xvfb: Child,
    pub app: Option<Child>,
    pub window: String,
    /// The standalone's `HOME` (removed on drop).
    home: PathBuf,
}

impl Session {
    /// Starts Xvfb (`screen` as `WxH`) at `dpi` and the standalone, and waits for its window.
    pub fn start(app: &Path, screen: &str, dpi: u32) -> anyhow::Result<Session> {
        use std::io::Write;
        let n = 90 + std::process::id() % 9;
        let display = format!(":{n}");
        let xvfb = Command::new("Xvfb")
            // -noreset: keep the resources (Xft.dpi) when xrdb, the first client, disconnects
            .args([
                display.as_str(),
                "-screen",
                "0",
                &format!("{screen}x24"),
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .spawn()?;
        // the platform's user folder under a home of the session's own, so that the picture
        // shows the folder a user sees ("~/.local/share/granary/presets"), not a temporary one
        let home = std::env::temp_dir().join(format!("granary-editor-home-{}", std::process::id()));
        let presets = home.join(".local/share/granary/presets");
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&presets)?;
        let mut s = Session {
            display,
            xvfb,
            app: None,
            window: String::new(),
            home,
        };
        std::thread::sleep(Duration::from_millis(800));
        let mut xrdb = Command::new("xrdb")
            .args(["-display", &s.display, "-merge"])
            .stdin(std::process::Stdio::piped())
            .spawn()?;
        xrdb.stdin
            .take()
            .expect("piped stdin")
            .write_all(format!("Xft.dpi: {dpi}\n").as_bytes())?;
        if !xrdb.wait()?.success() {
            anyhow::bail!("xrdb failed on {}", s.display);
        }
        s.app = Some(
            Command::new(app)
                .args(["--backend", "dummy"])
                .env("DISPLAY", &s.display)
                .env("HOME", &s.home)
                .env_remove("XDG_DATA_HOME")
                .env_remove("GRANARY_PRESET_DIR")
                .spawn()?,
        );
        let start = Instant::now();
        s.window = loop {
            if let Ok(ids) = s.xdotool(&["search", "--onlyvisible", "--name", "Granary"]) {
                if let Some(id) = ids.lines().last().filter(|l| !l.is_empty()) {
                    break id.to_string();
                }
            }
            if start.elapsed() > Duration::from_secs(60) {
                anyhow::bail!("the Granary window did not appear on {}", s.display);
            }
            std::thread::sleep(Duration::from_millis(300));
        };
        // let it draw
        std::thread::sleep(Duration::from_secs(2));
        s.xdotool(&["mousemove", "--window", &s.window.clone(), "5", "5"])?;
        s.xdotool(&["windowfocus", "--sync", &s.window.clone()])?;
        Ok(s)
    }

    pub fn xdotool(&self, args: &[&str]) -> anyhow::Result<String> {
        let o = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()?;
        if !o.status.success() {
            anyhow::bail!("xdotool {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        }
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    }

    /// The window's size in pixels.
    pub fn size(&self) -> anyhow::Result<(u32, u32)> {
        let shell = self.xdotool(&["getwindowgeometry", "--shell", &self.window])?;
        let get = |k: &str| -> anyhow::Result<u32> {
            shell
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| anyhow::anyhow!("no {k} in {shell:?}"))
        };
        Ok((get("WIDTH=")?, get("HEIGHT=")?))
    }

    /// Keys (xdotool names), then a pause for the editor to draw.
    pub fn key(&self, keys: &str) -> anyhow::Result<()> {
        // to the focused window (events sent to a window are marked synthetic)
        self.xdotool(&["windowfocus", "--sync", &self.window])?;
        self.xdotool(&["key", keys])?;
        std::thread::sleep(Duration::from_millis(1000));
        Ok(())
    }

    /// A click with `button` (1 left, 3 right) at window pixel (x, y).
    pub fn click(&self, button: u8, x: u32, y: u32) -> anyhow::Result<()> {
        let w = self.window.clone();
        self.xdotool(&["mousemove", "--window", &w, &x.to_string(), &y.to_string()])?;
        std::thread::sleep(Duration::from_millis(150));
        self.xdotool(&["click", &button.to_string()])?;
        std::thread::sleep(Duration::from_millis(500));
        Ok(())
    }

    /// The window as a PNG.
    pub fn shot(&self, out: &Path) -> anyhow::Result<()> {
        let status = Command::new("import")
            .env("DISPLAY", &self.display)
            .args(["-window", &self.window])
            .arg(out)
            .status()?;
        if !status.success() {
            anyhow::bail!("import failed: {status}");
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(app) = &mut self.app {
            let _ = app.kill();
            let _ = app.wait();
        }
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// `cargo xtask screenshot`: the editor at 100 % and 200 % (Xft.dpi 96, 192) while it
/// pours (Space held), as `docs/editor.png` and `docs/editor@2x.png`.
pub fn screenshot() -> anyhow::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    check_tools()?;
    let app = build_standalone()?;
    std::fs::create_dir_all("docs")?;
    for (dpi, out) in [(96, "docs/editor.png"), (192, "docs/editor@2x.png")] {
        let s = Session::start(&app, "2600x2000", dpi)?;
        s.xdotool(&["keydown", "space"])?;
        std::thread::sleep(Duration::from_millis(2500));
        let shot = s.shot(Path::new(out));
        let _ = s.xdotool(&["keyup", "space"]);
        shot?;
    }
    println!("Wrote docs/editor.png and docs/editor@2x.png");
    Ok(())
}

/// ImageMagick: the bounding box (w, h, x, y) of the pixels of `colour` (within `fuzz`) in
/// the region `crop` (`WxH+X+Y`) of `png`, or `None` if there are none.
fn colour_box(png: &Path, crop: &str, colour: &str, fuzz: &str) -> anyhow::Result<Option<(u32, u32, u32, u32)>> {
    let o = Command::new("convert")
        .arg(png)
        .args([
            "-crop", crop, "+repage", "-fuzz", fuzz, "-fill", "black", "+opaque", colour,
        ])
        .args(["-fill", "white", "-opaque", colour, "-format", "%@", "info:"])
        .output()?;
    let text = String::from_utf8_lossy(&o.stdout).trim().to_string();
    // "WxH+X+Y"; an empty mask trims to 0x0 or the whole region's 1x1
    let nums: Vec<u32> = text.split(['x', '+']).filter_map(|v| v.parse().ok()).collect();
    match nums[..] {
        [w, h, x, y] if w > 1 && h > 1 => Ok(Some((w, h, x, y))),
        _ => Ok(None),
    }
}

/// ImageMagick: how many pixels differ between two regions `crop` of two PNGs.
fn differing_pixels(a: &Path, b: &Path, crop: &str) -> anyhow::Result<u64> {
    let o = Command::new("sh")
        .args([
            "-c",
            &format!(
                "compare -metric AE \\( {a} -crop {crop} +repage \\) \\( {b} -crop {crop} +repage \\) null: 2>&1",
                a = a.display(),
                b = b.display()
            ),
        ])
        .output()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.split_whitespace().next().unwrap_or("");
    first
        .parse::<f64>()
        .map(|v| v as u64)
        .map_err(|_| anyhow::anyhow!("compare said {text:?}"))
}

/// The editor's columns at a window `w` pixels wide at 100 % (as `granary::editor::columns`
/// lays them out inside the 10-point margin): (left, right) of presets, parameters, live view.
fn columns(w: u32) -> [(u32, u32); 3] {
    let inner = w as f32 - 20.0;
    let preset_w = (0.23 * inner).clamp(170.0, 300.0);
    let params_w = (0.37 * inner).clamp(300.0, 440.0);
    let x1 = 10.0 + preset_w + 13.0;
    let x2 = x1 + params_w + 13.0;
    [
        (10, (10.0 + preset_w) as u32),
        (x1 as u32, (x1 + params_w) as u32),
        (x2 as u32, w - 10),
    ]
}

fn check(ok: bool, what: &str, failures: &mut Vec<String>) {
    println!("{} {what}", if ok { "ok  " } else { "FAIL" });
    if !ok {
        failures.push(what.to_string());
    }
}

/// `cargo xtask editor-test`: drives the standalone under Xvfb (1600 x 1000 screen) and
/// measures its screenshots: the cup drawn for the preset's shape and material, right-click
/// changing nothing, Ctrl + / - / 0 zooming within the screen, the minimum size, Ctrl+C.
pub fn editor_test() -> anyhow::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    check_tools()?;
    let app = build_standalone()?;
    let dir = std::env::temp_dir().join(format!("granary-editor-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let png = |name: &str| dir.join(format!("{name}.png"));
    let mut failures = Vec::new();
    let s = Session::start(&app, "1600x1000", 96)?;
    let (w, h) = s.size()?;
    println!("window {w} x {h}");
    let [presets, params, live] = columns(w);
    // the scene: the top 42 % of the live column below the header (about 52 px)
    let scene = format!(
        "{}x{}+{}+{}",
        live.1 - live.0,
        (0.42 * (h as f32 - 62.0)) as u32,
        live.0,
        52
    );

    // 1. the default preset (sugar, ceramic mug): a mug, taller than wide, in ceramic's colour
    s.shot(&png("start"))?;
    let mug = colour_box(&png("start"), &scene, "rgb(214,200,178)", "4%")?;
    println!("ceramic mug drawn at {mug:?}");
    check(
        mug.is_some_and(|(bw, bh, _, _)| bh > bw / 2 && bh as f32 > 0.8 * bw as f32),
        "the default preset draws a ceramic mug (about as tall as wide)",
        &mut failures,
    );
    // search "bowl", pick the first match (Rice, plastic bowl): a wide low bowl in plastic's blue
    // the search field and the list's first line, at 100 %
    s.click(1, presets.0 + 60, 81)?;
    s.xdotool(&["type", "plastic bowl"])?;
    std::thread::sleep(Duration::from_millis(500));
    s.click(1, presets.0 + 40, 105)?;
    s.xdotool(&["mousemove", "--window", &s.window, "5", "5"])?;
    std::thread::sleep(Duration::from_millis(700));
    s.shot(&png("bowl"))?;
    let bowl = colour_box(&png("bowl"), &scene, "rgb(80,150,230)", "4%")?;
    println!("plastic bowl drawn at {bowl:?}");
    check(
        bowl.is_some_and(|(bw, bh, _, _)| bw > 2 * bh),
        "Rice, plastic bowl draws a wide low bowl in the plastic's colour",
        &mut failures,
    );

    // 2. right-click on every slider row of the parameter column changes nothing
    let params_crop = format!("{}x{}+{}+{}", params.1 - params.0, h - 80, params.0, 52);
    s.shot(&png("before-right"))?;
    for y in (80..(h - 60)).step_by(26) {
        s.xdotool(&[
            "mousemove",
            "--window",
            &s.window,
            &((params.0 + params.1) / 2 + 20).to_string(),
            &y.to_string(),
        ])?;
        s.xdotool(&["click", "3"])?;
    }
    std::thread::sleep(Duration::from_millis(700));
    s.xdotool(&["mousemove", "--window", &s.window, "5", "5"])?;
    std::thread::sleep(Duration::from_millis(700));
    s.shot(&png("after-right"))?;
    let changed = differing_pixels(&png("before-right"), &png("after-right"), &params_crop)?;
    check(
        changed == 0,
        &format!("right-clicks change no parameter ({changed} pixels differ)"),
        &mut failures,
    );
    // the control: a left click on the same rows does change the column
    s.click(1, (params.0 + params.1) / 2 + 20, 110)?;
    s.xdotool(&["mousemove", "--window", &s.window, "5", "5"])?;
    std::thread::sleep(Duration::from_millis(700));
    s.shot(&png("after-left"))?;
    let changed = differing_pixels(&png("after-right"), &png("after-left"), &params_crop)?;
    check(
        changed > 0,
        "a left click there does change a value (the control)",
        &mut failures,
    );

    // 3. zoom keys: Ctrl + grows the window by a step, never past the screen; Ctrl - and
    // Ctrl 0 come back
    s.key("ctrl+plus")?;
    let (zw, zh) = s.size()?;
    println!("Ctrl +: {zw} x {zh}");
    check(
        (zw as f32 / w as f32 - 1.25).abs() < 0.03 || zh >= 880,
        "Ctrl + zooms in (the window grows by a step or up to the screen)",
        &mut failures,
    );
    for _ in 0..8 {
        s.key("ctrl+plus")?;
    }
    let (zw, zh) = s.size()?;
    println!("Ctrl + x 9: {zw} x {zh}");
    check(
        zw <= 1600 && zh <= 1000,
        "zooming in keeps the window on the 1600 x 1000 screen",
        &mut failures,
    );
    s.shot(&png("zoomed"))?;
    // the meters and Save stay visible: the bottom of the live column is drawn (not blank)
    s.key("ctrl+minus")?;
    let (mw, mh) = s.size()?;
    check(mw < zw || mh < zh, "Ctrl - zooms out", &mut failures);
    s.key("ctrl+0")?;
    let back = s.size()?;
    println!("Ctrl 0: {} x {}", back.0, back.1);
    check(
        back.1 <= 1000 && back.0 <= 1600,
        "Ctrl 0 returns to 100 %, on the screen",
        &mut failures,
    );

    // 4. the minimum size: the scene keeps the legend clear of the spout, the labels whole
    s.xdotool(&["windowsize", &s.window, "760", "560"])?;
    std::thread::sleep(Duration::from_millis(1500));
    let (mw, mh) = s.size()?;
    s.shot(&png("minimum"))?;
    check(
        (mw, mh) == (760, 560),
        &format!("the window takes the minimum size ({mw} x {mh})"),
        &mut failures,
    );
    let [_, _, live] = columns(mw);
    let scene = format!(
        "{}x{}+{}+{}",
        live.1 - live.0,
        (0.42 * (mh as f32 - 62.0)) as u32,
        live.0,
        52
    );
    let spout = colour_box(&png("minimum"), &scene, "rgb(120,120,130)", "1%")?;
    println!("spout at {spout:?} (scene {scene})");
    check(
        spout.is_some_and(|(_, _, _, y)| y >= 44),
        "the spout is below the legend band",
        &mut failures,
    );

    // 5. Ctrl+C (SIGINT) quits the standalone with its window open
    let mut s = s;
    let mut child = s.app.take().expect("the app runs");
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let start = Instant::now();
    let quit = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    check(
        quit.is_some(),
        &format!("SIGINT quits the standalone ({quit:?})"),
        &mut failures,
    );
    drop(s);
    println!("screenshots in {}", dir.display());
    if failures.is_empty() {
        println!("editor-test: all checks passed");
        Ok(())
    } else {
        anyhow::bail!("editor-test: {} check(s) failed: {failures:?}", failures.len())
    }
}
