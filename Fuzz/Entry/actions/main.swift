import AppShellFuzzTargets

// The `actions` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    ActionsFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
