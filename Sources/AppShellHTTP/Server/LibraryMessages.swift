import AppShellConcurrency
import CMicroHTTPD

// libmicrohttpd's own messages (it writes them to standard error unprefixed by default). They come
// here formatted by the shim's logger and go to the process's log as entries labelled
// `appshell.libmicrohttpd`: at `error`, or at `debug` when they report what the server meant to
// happen.

/// Receives each libmicrohttpd message (see `LibraryMessages`).
let libraryMessageCallback: appshell_mhd_message_callback = { message in
    guard let message else { return }
    LibraryMessages.log(String(cString: message))
}

/// What becomes of libmicrohttpd's messages.
enum LibraryMessages {
    /// The label of their entries; by default a line `appshell: libmicrohttpd: <message>`.
    static let label = "appshell.libmicrohttpd"

    /// Messages about what the server did on purpose. A stream's reader answers "end with error"
    /// to have its connection closed when the stream ends (its client left, fell too far behind,
    /// or the server shuts down), and libmicrohttpd says so each time.
    private static let expected: Set<String> = [
        "Closing connection (application error generating response)."
    ]

    /// Whether `message` reports something the server meant to happen.
    static func isExpected(_ message: String) -> Bool { expected.contains(message) }

    /// Logs `message`: at `debug` when it is expected, else at `error`.
    static func log(_ message: String) {
        Logger(label: label).log(level: isExpected(message) ? .debug : .error, message)
    }
}
