//! Which requests on an HTTP/1 connection are watches: the proxy follows a client's requests
//! (heads, and bodies by `Content-Length` or chunks) to tell where each one starts.

/// A request head (or a chunk-size line, or trailers) longer than this stops the scan of its
/// connection: its later requests are forwarded without being looked at.
const MAX_HEAD_SIZE: usize = 64 * 1024;

/// The most headers a request head may have to be read.
const MAX_HEADERS: usize = 64;

/// Whether a request is a watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RequestKind {
    Watch,
    Other,
}

/// Where a [`RequestScanner`] is in the bytes of a connection.
#[derive(Debug, Default, PartialEq, Eq)]
enum ScanState {
    /// In a request line and headers.
    #[default]
    Head,
    /// In a body of known length.
    Body { remaining: u64 },
    /// In the size line of a chunk.
    ChunkSize,
    /// In a chunk's data and the line end after it.
    ChunkData { remaining: u64 },
    /// In the trailers after the last chunk.
    Trailers,
    /// Past a protocol upgrade or something unreadable: no more requests are looked for.
    Opaque,
}

/// What one parse of the pending bytes found: the bytes it used and what they say, more bytes
/// needed, or bytes that are not HTTP/1.
type Parsed<T> = Result<httparse::Status<(usize, T)>, ()>;

/// Follows the HTTP/1 requests a client sends on one connection, to tell where each request
/// starts and whether it is a watch.
#[derive(Debug, Default)]
pub(super) struct RequestScanner {
    state: ScanState,
    /// The start of a head, chunk-size line or trailers whose end has not arrived yet.
    pending: Vec<u8>,
}

impl RequestScanner {
    /// Reads the next bytes of the connection; returns the requests whose head ended in them.
    pub(super) fn scan(&mut self, mut bytes: &[u8]) -> Vec<RequestKind> {
        let mut heads = Vec::new();
        while !bytes.is_empty() {
            bytes = match self.state {
                ScanState::Head => {
                    let (rest, head) = self.parse_next(bytes, parse_head);
                    if let Some((kind, body)) = head {
                        heads.push(kind);
                        self.state = body;
                    }
                    rest
                }
                ScanState::Body { remaining } => self.skip(bytes, remaining),
                ScanState::ChunkData { remaining } => self.skip(bytes, remaining),
                ScanState::ChunkSize => {
                    let (rest, size) = self.parse_next(bytes, parse_chunk_size);
                    match size {
                        Some(0) => self.state = ScanState::Trailers,
                        // the data, then its line end
                        Some(size) => {
                            self.state = ScanState::ChunkData {
                                remaining: size.saturating_add(2),
                            }
                        }
                        None => {}
                    }
                    rest
                }
                ScanState::Trailers => {
                    let (rest, end) = self.parse_next(bytes, parse_trailers);
                    if end.is_some() {
                        self.state = ScanState::Head;
                    }
                    rest
                }
                ScanState::Opaque => &[],
            };
        }
        heads
    }

    /// Parses what is pending followed by `bytes`; returns the rest of `bytes` after what was
    /// parsed, and what it says once complete. Stops scanning the connection on bytes that are
    /// not HTTP/1 or a head longer than [`MAX_HEAD_SIZE`].
    fn parse_next<'a, T>(&mut self, bytes: &'a [u8], parse: fn(&[u8]) -> Parsed<T>) -> (&'a [u8], Option<T>) {
        let before = self.pending.len();
        self.pending.extend_from_slice(bytes);
        match parse(&self.pending) {
            Ok(httparse::Status::Complete((used, value))) => {
                self.pending.clear();
                (&bytes[used.saturating_sub(before)..], Some(value))
            }
            Ok(httparse::Status::Partial) if self.pending.len() <= MAX_HEAD_SIZE => (&[], None),
            Ok(httparse::Status::Partial) | Err(()) => {
                self.state = ScanState::Opaque;
                self.pending = Vec::new();
                (&[], None)
            }
        }
    }

    /// Skips up to `remaining` bytes of a body or a chunk.
    fn skip<'a>(&mut self, bytes: &'a [u8], remaining: u64) -> &'a [u8] {
        let skipped = usize::try_from(remaining).map_or(bytes.len(), |r| r.min(bytes.len()));
        let remaining = remaining - skipped as u64;
        self.state = match (&self.state, remaining) {
            (ScanState::Body { .. }, 0) => ScanState::Head,
            (ScanState::Body { .. }, remaining) => ScanState::Body { remaining },
            (_, 0) => ScanState::ChunkSize,
            (_, remaining) => ScanState::ChunkData { remaining },
        };
        &bytes[skipped..]
    }
}

/// A request head: whether it is a watch, and what follows it.
fn parse_head(bytes: &[u8]) -> Parsed<(RequestKind, ScanState)> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    Ok(match request.parse(bytes).map_err(drop)? {
        httparse::Status::Complete(used) => {
            httparse::Status::Complete((used, (request_kind(&request), body_state(request.headers))))
        }
        httparse::Status::Partial => httparse::Status::Partial,
    })
}

fn parse_chunk_size(bytes: &[u8]) -> Parsed<u64> {
    httparse::parse_chunk_size(bytes).map_err(drop)
}

/// The trailers after the last chunk, up to the blank line that ends them.
fn parse_trailers(bytes: &[u8]) -> Parsed<()> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    Ok(
        match httparse::parse_headers(bytes, &mut headers).map_err(drop)? {
            httparse::Status::Complete((used, _)) => httparse::Status::Complete((used, ())),
            httparse::Status::Partial => httparse::Status::Partial,
        },
    )
}

/// Whether the request's query asks for a watch (`watch=true` or `watch=1`).
fn request_kind(request: &httparse::Request<'_, '_>) -> RequestKind {
    let query = request
        .path
        .and_then(|path| path.split_once('?'))
        .map(|(_, query)| query);
    let watch = query.is_some_and(|query| {
        form_urlencoded::parse(query.as_bytes())
            .any(|(name, value)| name == "watch" && (value == "true" || value == "1"))
    });
    if watch {
        RequestKind::Watch
    } else {
        RequestKind::Other
    }
}

/// What follows a request head with `headers`: a body by length or by chunks, the next
/// request, or (after an upgrade) bytes that are not HTTP/1.
fn body_state(headers: &[httparse::Header<'_>]) -> ScanState {
    let value = |name: &str| {
        headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case(name))
            .map(|header| String::from_utf8_lossy(header.value).trim().to_ascii_lowercase())
    };
    if value("upgrade").is_some() {
        return ScanState::Opaque;
    }
    if value("transfer-encoding").is_some_and(|encoding| encoding.ends_with("chunked")) {
        return ScanState::ChunkSize;
    }
    match value("content-length").and_then(|length| length.parse().ok()) {
        Some(0) | None => ScanState::Head,
        Some(remaining) => ScanState::Body { remaining },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(parts: &[&[u8]]) -> Vec<RequestKind> {
        let mut scanner = RequestScanner::default();
        parts.iter().flat_map(|part| scanner.scan(part)).collect()
    }

    #[test]
    fn the_scanner_finds_watches_among_keep_alive_requests() {
        let list = b"GET /api/v1/pods?limit=500 HTTP/1.1\r\nhost: x\r\n\r\n";
        let watch = b"GET /api/v1/pods?allowWatchBookmarks=true&watch=true&resourceVersion=5 HTTP/1.1\r\nhost: x\r\n\r\n";
        let watch_one = b"GET /api/v1/pods?watch=1 HTTP/1.1\r\n\r\n";
        let not_watch = b"GET /api/v1/pods?watch=false&x=watch=true HTTP/1.1\r\n\r\n";
        let all = [&list[..], watch, watch_one, not_watch].concat();
        let expected = [
            RequestKind::Other,
            RequestKind::Watch,
            RequestKind::Watch,
            RequestKind::Other,
        ];
        assert_eq!(scan_all(&[&all]), expected);
        let one_byte_at_a_time: Vec<&[u8]> = all.chunks(1).collect();
        assert_eq!(scan_all(&one_byte_at_a_time), expected);
    }

    #[test]
    fn the_scanner_skips_bodies_by_length_and_by_chunks() {
        let fake = b"GET /api/v1/pods?watch=true HTTP/1.1\r\n\r\n";
        let sized = [
            format!(
                "POST /api/v1/namespaces/a/pods HTTP/1.1\r\ncontent-length: {}\r\n\r\n",
                fake.len()
            )
            .as_bytes(),
            fake,
        ]
        .concat();
        let chunked = [
            &b"PUT /api/v1/namespaces/a/pods/p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            format!("{:x};ext=1\r\n", fake.len()).as_bytes(),
            fake,
            b"\r\n0\r\ntrailer: t\r\n\r\n",
        ]
        .concat();
        let list = b"GET /api/v1/pods HTTP/1.1\r\n\r\n";
        let all = [&sized[..], &chunked, list].concat();
        let expected = [RequestKind::Other; 3];
        assert_eq!(scan_all(&[&all]), expected);
        let cut_in_three: Vec<&[u8]> = all.chunks(all.len() / 3 + 1).collect();
        assert_eq!(scan_all(&cut_in_three), expected);
        let one_byte_at_a_time: Vec<&[u8]> = all.chunks(1).collect();
        assert_eq!(scan_all(&one_byte_at_a_time), expected);
    }

    #[test]
    fn the_scanner_stops_after_an_upgrade() {
        let upgrade = b"GET /api/v1/namespaces/a/pods/p/exec HTTP/1.1\r\nupgrade: websocket\r\n\r\n";
        let later = b"GET /api/v1/pods?watch=true HTTP/1.1\r\n\r\n";
        assert_eq!(scan_all(&[&[&upgrade[..], later].concat()]), [RequestKind::Other]);
    }
}
