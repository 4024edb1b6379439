import Glibc

/// Standard error, written without Foundation's `FileHandle` (importing `Foundation` links its
/// internationalization data into the server): for the few messages that are not log lines (a
/// password prompt); log lines go through `Logger`.
package enum StandardError {
    /// Writes all of `text` to standard error (descriptor 2), continuing after an interruption or
    /// a short write. A failure is ignored: there is nowhere left to report it.
    package static func write(_ text: String) {
        var text = text
        text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: 2) }
    }

    /// Writes all of `bytes` to `descriptor` in as few `write(2)` calls as the kernel allows,
    /// continuing after an interruption or a short write; a failure is ignored (a log has nowhere
    /// left to report it). A line shorter than a pipe buffer goes out in one call, so lines that
    /// several threads write do not interleave.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
