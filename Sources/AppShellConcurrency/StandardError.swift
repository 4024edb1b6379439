import Glibc

/// Standard error, written without Foundation's `FileHandle` (importing `Foundation` links its
/// internationalization data into the server): for the few messages that are not log lines.
public enum StandardError {
    /// Writes all of `text` to standard error (descriptor 2), continuing after an interruption or
    /// a short write. A failure is ignored: there is nowhere left to report it.
    public static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
