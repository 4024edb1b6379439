import AppShellFuzzTargets

// The `json` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    JSONFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
