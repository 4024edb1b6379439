import AppShellFuzzTargets

// The `last-event-id` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    LastEventIDFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
