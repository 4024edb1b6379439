import Glibc

/// An open regular file handed to the server as a response body; closed exactly once, by the
/// server after sending or by `deinit` if it is never sent.
public final class OpenFile: @unchecked Sendable {
    // @unchecked: the descriptor is only read by the one thread building the response, and
    // `take()` transfers ownership once.
    private var descriptor: Int32
    /// The file's size in bytes when it was opened.
    public let size: Int

    init(descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    /// Gives up ownership of the descriptor (libmicrohttpd closes it after sending).
    func take() -> Int32 {
        let taken = descriptor
        descriptor = -1
        return taken
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
