-- Creates the session for `cargo xtask daw-test` (run by ardour7-lua, "None (Dummy)" backend):
-- a MIDI track with Granary (VST3, its default state) into the master bus, panners bypassed so
-- the stereo pair reaches the export untouched. The harness adds the MIDI region afterwards
-- (Ardour 7.3's Lua cannot create one). Reports CREATED to the harness.
local dir = assert(os.getenv("GRANARY_DAW_SESSION_DIR"))
local name = assert(os.getenv("GRANARY_DAW_SESSION_NAME"))
local rate = assert(tonumber(os.getenv("GRANARY_DAW_RATE")))

local backend = AudioEngine:set_backend("None (Dummy)", "", "")
assert(backend, "no Dummy backend")
backend:set_sample_rate(rate)
local s = create_session(dir, name, rate)
assert(s, "create_session failed")
assert(s:nominal_sample_rate() == rate, "session rate " .. s:nominal_sample_rate())

local granary = ARDOUR.LuaAPI.new_plugin_info("Granary", ARDOUR.PluginType.VST3)
assert(not granary:isnil(), "Granary (VST3) not found: is the scan cache in place?")
local tracks = s:new_midi_track(ARDOUR.ChanCount(ARDOUR.DataType("midi"), 1),
  ARDOUR.ChanCount(ARDOUR.DataType("audio"), 2), true, granary, nil, nil, 1, "Pour",
  ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true)
assert(tracks:size() == 1, "no track")
for t in tracks:iter() do
  assert(t:nth_plugin(0):name() == "Granary", "the track's first plugin is " .. t:nth_plugin(0):name())
  t:panner_shell():set_bypassed(true)
  -- wired here: Ardour's auto-connect runs in its own thread and may not have run yet
  for c = 0, 1 do
    local from = t:output():audio(c)
    local to = s:master_out():input():audio(c):name()
    from:connect(to)
    assert(from:connected_to(to), from:name() .. " not connected to " .. to)
  end
end
s:master_out():panner_shell():set_bypassed(true)

s:save_state("", false, false, false, false, false)
close_session()
io.stderr:write("CREATED\n") -- unbuffered: stdout is lost when Ardour crashes
