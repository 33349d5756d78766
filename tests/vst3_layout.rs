//! The VST3 bus layouts a host may ask for, through the plugin's real VST3 COM interface
//! (`GetPluginFactory` → `IComponent` → `IAudioProcessor::setBusArrangements`), as a host does
//! before activating. Granary has two layouts: stereo Main + Grains + Cup + Surface + Friction, and
//! stereo Main alone. Any other request, such as a mono bus in either place, must be refused. And the
//! values of the hidden MIDI CC parameters a host reads when a project loads (and sends on the
//! first process call): a controller at rest.
//!
//! The factory is the one linked into this test binary (`granary::GetPluginFactory`, the same
//! code the `.vst3` bundle exports), so the test runs in a plain `cargo test`.

use nice_plug::wrapper::vst3::vst3::Steinberg::Vst::SpeakerArr::{kMono, kStereo};
use nice_plug::wrapper::vst3::vst3::Steinberg::Vst::{
    BusDirections_, IAudioProcessor, IAudioProcessorTrait, IComponent, IComponentTrait, IEditController,
    IEditControllerTrait, MediaTypes_, ParameterInfo, SpeakerArrangement,
};
use nice_plug::wrapper::vst3::vst3::Steinberg::{
    kResultFalse, kResultOk, IPluginBaseTrait, IPluginFactory, IPluginFactoryTrait, PClassInfo,
};
use nice_plug::wrapper::vst3::vst3::{ComPtr, Interface};
use std::ffi::c_void;

/// A fresh instance's audio processor, from the factory's first (only) class.
fn processor() -> ComPtr<IAudioProcessor> {
    // SAFETY: `GetPluginFactory` returns an owned reference to nice-plug's `IPluginFactory`;
    // every call below follows the VST3 API (valid out-pointers, the class's own CID, the IID
    // of the interface asked for), and the returned objects are owned `ComPtr`s.
    unsafe {
        let factory = ComPtr::from_raw(granary::GetPluginFactory() as *mut IPluginFactory).expect("a factory");
        assert_eq!(factory.countClasses(), 1);
        let mut info: PClassInfo = std::mem::zeroed();
        assert_eq!(factory.getClassInfo(0, &mut info), kResultOk);
        let mut obj: *mut c_void = std::ptr::null_mut();
        let result = factory.createInstance(
            info.cid.as_ptr(),
            IComponent::IID.as_ptr() as *const std::ffi::c_char,
            &mut obj,
        );
        assert_eq!(result, kResultOk, "createInstance");
        let component = ComPtr::from_raw(obj as *mut IComponent).expect("an IComponent");
        assert_eq!(component.initialize(std::ptr::null_mut()), kResultOk);
        component
            .cast::<IAudioProcessor>()
            .expect("the component is an IAudioProcessor")
    }
}

/// Asks for `outputs` (no inputs: Granary is an instrument).
fn request(processor: &ComPtr<IAudioProcessor>, outputs: &[SpeakerArrangement]) -> i32 {
    let mut outputs = outputs.to_vec();
    let mut inputs: [SpeakerArrangement; 0] = [];
    // SAFETY: both arrays are valid for their counts (the input array is empty).
    unsafe { processor.setBusArrangements(inputs.as_mut_ptr(), 0, outputs.as_mut_ptr(), outputs.len() as i32) }
}

/// The output busses the instance reports, as a host reads them back.
fn reported_outputs(processor: &ComPtr<IAudioProcessor>) -> Vec<SpeakerArrangement> {
    let component = processor.cast::<IComponent>().expect("an IComponent");
    // SAFETY: valid out-pointers; bus indices below the reported count.
    unsafe {
        let count = component.getBusCount(MediaTypes_::kAudio as i32, BusDirections_::kOutput as i32);
        (0..count)
            .map(|i| {
                let mut arr: SpeakerArrangement = 0;
                let r = processor.getBusArrangement(BusDirections_::kOutput as i32, i, &mut arr);
                assert_eq!(r, kResultOk, "getBusArrangement({i})");
                arr
            })
            .collect()
    }
}

#[test]
fn the_plugins_own_layouts_are_accepted() {
    let p = processor();
    assert_eq!(
        request(&p, &[kStereo; 5]),
        kResultOk,
        "Main + Grains + Cup + Surface + Friction"
    );
    assert_eq!(reported_outputs(&p), [kStereo; 5]);
    assert_eq!(request(&p, &[kStereo]), kResultOk, "Main alone");
    assert_eq!(reported_outputs(&p), [kStereo]);
    assert_eq!(request(&p, &[kStereo; 5]), kResultOk, "back to all five");
    assert_eq!(reported_outputs(&p), [kStereo; 5]);
}

#[test]
fn a_mono_bus_anywhere_is_refused_and_changes_nothing() {
    let p = processor();
    for outputs in [
        [kStereo, kStereo, kStereo, kStereo, kMono],
        [kStereo, kStereo, kStereo, kMono, kStereo],
        [kStereo, kStereo, kMono, kStereo, kStereo],
        [kStereo, kMono, kStereo, kStereo, kStereo],
        [kMono, kStereo, kStereo, kStereo, kStereo],
        [kMono; 5],
    ] {
        assert_eq!(request(&p, &outputs), kResultFalse, "{outputs:?} must be refused");
        assert_eq!(reported_outputs(&p), [kStereo; 5], "after refusing {outputs:?}");
    }
    assert_eq!(request(&p, &[kMono]), kResultFalse, "mono Main alone must be refused");
    // the wrong number of busses
    assert_eq!(request(&p, &[kStereo, kStereo]), kResultFalse);
    assert_eq!(request(&p, &[kStereo; 3]), kResultFalse);
    assert_eq!(
        request(&p, &[kStereo; 4]),
        kResultFalse,
        "the layout before the Friction stem"
    );
    assert_eq!(request(&p, &[kStereo; 6]), kResultFalse);
    assert_eq!(request(&p, &[]), kResultFalse);
    assert_eq!(reported_outputs(&p), [kStereo; 5]);
}

#[test]
fn the_hidden_midi_cc_parameters_read_as_a_controller_at_rest() {
    // Hosts read these when a project loads and send them on the first process call: at 0.5
    // (nice-plug's old answer) the mod wheel and channel pressure would pour half again faster
    let p = processor();
    let controller = p.cast::<IEditController>().expect("an IEditController");
    let mut seen = [0usize; 3];
    // SAFETY: valid out-pointers; indices below the reported count; ids the plugin reported.
    unsafe {
        for i in 0..controller.getParameterCount() {
            let mut info: ParameterInfo = std::mem::zeroed();
            assert_eq!(controller.getParameterInfo(i, &mut info), kResultOk);
            let title = String::from_utf16_lossy(&info.title);
            let title = title.trim_end_matches('\0');
            // JUCE's names for the proxies, "MIDI CC <channel from 0>|<controller>", which
            // JUCE-based hosts leave out of their parameter lists
            let Some(numbers) = title.strip_prefix("MIDI CC ") else {
                continue;
            };
            let (channel, cc) = numbers.split_once('|').expect("MIDI CC <channel>|<controller>");
            let (channel, cc): (u32, u32) = (channel.parse().unwrap(), cc.parse().unwrap());
            assert!(channel < 16 && cc < 130, "{title}");
            assert_ne!(info.flags & (1 << 4), 0, "{title}: hidden");
            let (rest, kind) = match cc {
                129 => (0.5, 2), // pitch bend
                128 => (0.0, 1), // channel pressure
                _ => (0.0, 0),
            };
            seen[kind] += 1;
            assert_eq!(info.defaultNormalizedValue, rest, "{title}: default");
            assert_eq!(controller.getParamNormalized(info.id), rest, "{title}: value");
        }
    }
    // 16 channels of 128 CCs, channel pressure and pitch bend
    assert_eq!(seen, [16 * 128, 16, 16]);
}
