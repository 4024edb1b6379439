import AppShellConcurrency
import Glibc

/// Reading a password from standard input, without echo when it is a terminal.
package enum PasswordPrompt {
    /// Whether standard input is a terminal.
    package static var isTerminal: Bool { isatty(0) == 1 }

    /// Writes `text` to standard error (the prompt must not mix with the hash on stdout).
    package static func write(_ text: String) {
        StandardError.write(text)
    }

    /// One line of standard input without its newline; echo is turned off meanwhile unless `echo`.
    package static func readLine(echo: Bool) -> String? {
        var saved = termios()
        let silenced = !echo && tcgetattr(0, &saved) == 0
        if silenced {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &quiet)
        }
        defer { if silenced { tcsetattr(0, TCSAFLUSH, &saved) } }
        return Swift.readLine(strippingNewline: true)
    }
}
