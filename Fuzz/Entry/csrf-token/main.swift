import AppShellFuzzTargets

// The `csrf-token` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    CSRFTokenFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
