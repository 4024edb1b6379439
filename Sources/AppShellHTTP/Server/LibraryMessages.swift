import CMicroHTTPD

// libmicrohttpd's own messages (it writes them to standard error unprefixed by default). They come
// here formatted by the shim's logger and go to the server's log, as every other line on standard
// error does, unless they report what the server meant to happen.

/// Receives each libmicrohttpd message (see `LibraryMessages`).
let libraryMessageCallback: appshell_mhd_message_callback = { message in
    guard let message else { return }
    let text = String(cString: message)
    if !LibraryMessages.isExpected(text) { LibraryMessages.log(text) }
}

/// What becomes of libmicrohttpd's messages.
enum LibraryMessages {
    /// Messages about what the server did on purpose. A stream's reader answers "end with error"
    /// to have its connection closed when the stream ends (its client left, fell too far behind,
    /// or the server shuts down), and libmicrohttpd says so each time.
    private static let expected: Set<String> = [
        "Closing connection (application error generating response)."
    ]

    /// Whether `message` reports something the server meant to happen.
    static func isExpected(_ message: String) -> Bool { expected.contains(message) }

    /// Writes `message` to standard error as the server's other lines are.
    static func log(_ message: String) { AccessLog.error("libmicrohttpd: \(message)") }
}
