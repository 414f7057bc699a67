//! What a test answers `pods/exec` with: [`ExecRequest`] in, [`ExecOutput`] out.

/// A command run in a container of a pod on a simulated node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container (the request's `container`, else the pod's only container).
    pub container: String,
    /// The command and its arguments (`command` of the request, in order).
    pub command: Vec<String>,
    /// What the client wrote to stdin before closing it (empty unless it asked for stdin).
    pub stdin: Vec<u8>,
}

/// What a command printed, and how it exited.
///
/// ```
/// use informer_testserver::kubelet::ExecOutput;
///
/// let ok = ExecOutput::stdout("hello\n");
/// let failed = ExecOutput::stderr("no such file\n").exit_code(2);
/// assert_eq!((ok.code, failed.code), (0, 2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// Written to stdout.
    pub stdout: Vec<u8>,
    /// Written to stderr.
    pub stderr: Vec<u8>,
    /// The exit code (0: success; any other: the `NonZeroExitCode` failure kube-apiserver
    /// reports).
    pub code: i32,
}

impl ExecOutput {
    /// Success with this on stdout.
    pub fn stdout(text: impl Into<Vec<u8>>) -> Self {
        Self {
            stdout: text.into(),
            ..Self::default()
        }
    }

    /// Exit code 1 with this on stderr (change it with [`ExecOutput::exit_code`]).
    pub fn stderr(text: impl Into<Vec<u8>>) -> Self {
        Self {
            stderr: text.into(),
            code: 1,
            ..Self::default()
        }
    }

    /// The same output with this exit code.
    pub fn exit_code(mut self, code: i32) -> Self {
        self.code = code;
        self
    }
}

/// A registered answer to exec requests.
pub(crate) type ExecHandler = std::sync::Arc<dyn Fn(&ExecRequest) -> ExecOutput + Send + Sync>;
