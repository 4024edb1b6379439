import AppShellFuzzTargets

// The `request` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    RequestFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
