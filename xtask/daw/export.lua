-- Opens the session `cargo xtask daw-test` prepared and exports it (float WAV at the session
-- rate, freewheeling) once for each take in GRANARY_DAW_TAKES (comma-separated), in order:
-- "first" and "second" are the first and the next bounce after the project loads, and each
-- "reactivated-K" follows a deactivation and reactivation of the plugin. After a host crash
-- the harness starts again with the takes not yet exported. Tells the harness where Ardour's
-- tempo map puts the notes (NOTE on off velocity, in samples), the export range (RANGE start
-- end) and EXPORTED name after each export that Ardour reports as complete. On stderr,
-- unbuffered: when Ardour crashes, what was printed on stdout is lost.
local dir = assert(os.getenv("GRANARY_DAW_SESSION_DIR"))
local name = assert(os.getenv("GRANARY_DAW_SESSION_NAME"))
local rate = assert(tonumber(os.getenv("GRANARY_DAW_RATE")))
local out = assert(os.getenv("GRANARY_DAW_OUT"))
local preset = assert(os.getenv("GRANARY_DAW_PRESET"))
local beats = assert(tonumber(os.getenv("GRANARY_DAW_BEATS")))
local takes = {}
for take in assert(os.getenv("GRANARY_DAW_TAKES")):gmatch("[^,]+") do
  takes[#takes + 1] = take
end
local TICKS = 1920 -- Temporal::ticks_per_beat

local function say(line)
  io.stderr:write(line .. "\n")
end

assert(AudioEngine:set_backend("None (Dummy)", "", ""), "no Dummy backend")
local s = load_session(dir, name)
assert(s, "load_session failed")
assert(s:nominal_sample_rate() == rate, "session rate " .. s:nominal_sample_rate())

-- "B:T" (beats and ticks) to samples on the session's tempo map
local function samples(b)
  local whole, ticks = tostring(b):match("^(%d+):(%d+)$")
  assert(whole, "unexpected beat time " .. tostring(b))
  return Temporal.timepos_t.from_ticks(tonumber(whole) * TICKS + tonumber(ticks)):samples()
end

local regions = 0
for t in s:get_tracks():iter() do
  assert(t:nth_plugin(0):name() == "Granary", "the track's first plugin is " .. t:nth_plugin(0):name())
  for r in t:to_track():playlist():region_list():iter() do
    regions = regions + 1
    assert(r:start():samples() == 0, "the region must start at the start of its source")
    local at = r:position():samples()
    for n in ARDOUR.LuaAPI.note_list(r:to_midiregion():model()):iter() do
      say(string.format("NOTE %d %d %d", at + samples(n:time()),
        at + samples(n:time() + n:length()), n:velocity()))
    end
  end
end
assert(regions == 1, regions .. " regions (expected 1)")
say("LATENCY " .. s:worst_route_latency())

local stop = Temporal.timepos_t.from_ticks(beats * TICKS):samples()
say(string.format("RANGE %d %d", 0, stop))
for _, take in ipairs(takes) do
  if take:find("^reactivated") then
    for t in s:get_tracks():iter() do
      local granary = t:nth_plugin(0)
      granary:deactivate()
      assert(not granary:active(), "the plugin is still active")
      granary:activate()
      assert(granary:active(), "the plugin did not activate")
    end
  end
  local e = s:simple_export()
  assert(e:set_preset(preset), "export preset " .. preset .. " not found")
  e:set_folder(out)
  e:set_name(take)
  e:set_range(0, stop)
  assert(e:run_export(), "export " .. take .. " failed")
  say("EXPORTED " .. take)
end
close_session()
say("CLOSED")
