import AppShellFuzzTargets

// The `form` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    FormFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
