import AppShellFuzzTargets

// The `percent-encoding` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    PercentEncodingFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
