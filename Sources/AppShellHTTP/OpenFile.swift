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

    /// The file's bytes from its start, or `nil` when it cannot be read whole.
    func readAll() -> [UInt8]? {
        guard descriptor >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while done < size {
                let count = pread(descriptor, buffer.baseAddress! + done, size - done, off_t(done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        return complete ? bytes : nil
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
