import AppShellFuzzTargets

// The `request-target` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    RequestTargetFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
