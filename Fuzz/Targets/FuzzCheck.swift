/// What every fuzz target shares: a property that does not hold stops the run with a message
/// (libFuzzer then saves the input as a crash), and the input split into lines.
enum FuzzCheck {
    /// Stops the run when `condition` is false: a property of the parser does not hold.
    static func require(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        if !condition() { fatalError("fuzz property failed: \(message())", file: file, line: line) }
    }

    /// The input's lines (split at `\n`, empty ones kept).
    static func lines(_ data: [UInt8]) -> [ArraySlice<UInt8>] {
        data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    }

    /// The input's text as a C string would give it: up to the first NUL, invalid UTF-8 replaced
    /// (what `String(cString:)` makes of the bytes libmicrohttpd hands over).
    static func cString(_ data: some Collection<UInt8>) -> String {
        String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
    }
}
