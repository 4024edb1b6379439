import Glibc

/// A thread of its own for a long-running loop (a sweeper, a scheduler, a watcher), with a name
/// that `ps -T`, `top -H` and debuggers show: named and started the way Foundation's `Thread` is.
///
/// A pthread, not Foundation's `Thread`: importing `Foundation` links its internationalization data
/// (ICU, about 45 MB) into the statically linked server. ThreadSanitizer understands pthreads.
///
/// The thread is detached: a caller that must wait for it to end has the closure say so (say, by
/// signalling a semaphore as its last step).
package final class BackgroundThread {
    /// The name the thread takes when it starts; Linux keeps the first 15 bytes of it.
    package var name: String?
    private let body: @Sendable () -> Void
    private var started = false

    /// A thread that runs `body` once started.
    package init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    /// Starts the thread running the closure. A thread starts once; not being able to start one
    /// (the process is out of threads or memory) stops the process, as the server cannot run
    /// without it.
    package func start() {
        precondition(!started, "a BackgroundThread starts once")
        started = true
        let start = Start(name: name, body: body)
        let argument = Unmanaged.passRetained(start).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, runBackgroundThread, argument)
        pthread_attr_destroy(&attributes)
        if result != 0 {
            Unmanaged<Start>.fromOpaque(argument).release()
            fatalError("cannot start the thread \(name ?? ""): pthread_create returned \(result)")
        }
    }

    /// What the new thread receives: its name and its work.
    fileprivate final class Start: Sendable {
        let name: String?
        let body: @Sendable () -> Void

        init(name: String?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Names the calling thread by writing its `comm` file, which is what `pthread_setname_np`
    /// does (Glibc's Swift module leaves that GNU extension out); the kernel keeps 15 bytes. A
    /// thread that cannot be named (no `/proc`) runs unnamed.
    fileprivate static func nameCurrentThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        var name = name
        _ = name.withUTF8 { Glibc.write(file, $0.baseAddress, $0.count) }
        close(file)
    }
}

/// The new thread's entry point: names the thread and runs the closure.
private func runBackgroundThread(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<BackgroundThread.Start>.fromOpaque(argument!).takeRetainedValue()
    if let name = start.name { BackgroundThread.nameCurrentThread(name) }
    start.body()
    return nil
}
