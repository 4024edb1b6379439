import CLibFuzzer
import Glibc

/// The `main` of every fuzz executable (Fuzz/Entry): hands the command line and one target to
/// libFuzzer's driver, which calls the target once per input, and exits with the driver's status.
///
/// The executables bring their own `main` rather than libFuzzer's (`-sanitize=fuzzer`), so that
/// they are built in the AddressSanitizer build of the tests (`make asan-build`) with libFuzzer
/// linked into them alone; SwiftPM renames an executable's `main`, which would hide libFuzzer's.
public enum FuzzDriver {
    /// One fuzz target as libFuzzer calls it: an input's bytes and their count; returns 0.
    public typealias Target = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    /// Runs libFuzzer on `target` with this process's arguments, then exits with its status.
    public static func run(_ target: Target) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, target))
    }

    /// An input as bytes (none when libFuzzer passes no pointer).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }
}
