import AppShellFuzzTargets

// The `forwarded` fuzz target (`make fuzz`): libFuzzer's driver, one input per call.
FuzzDriver.run { data, size in
    ForwardedFuzz.run(FuzzDriver.bytes(data, size))
    return 0
}
