//! The protocol over standard input and output: the base protocol's framing
//! (`Content-Length` headers) read with a bound on each message, so a client cannot make
//! the server hold more than [`MAX_MESSAGE_BYTES`] for one message; the messages
//! themselves are `lsp-server`'s, handed over its channels.

use std::io::{self, BufRead, Read};
use std::thread;

use lsp_server::{Connection, Message};

/// The largest message read (a document of a dataset is far smaller).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// The longest header line read.
const MAX_HEADER_LINE: u64 = 8 << 10;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Reads one message's body (`None` at the end of input).
pub fn read_body(inp: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut size: Option<usize> = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = inp
            .by_ref()
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err(invalid("input ended inside a message header".to_owned()))
            };
        }
        first = false;
        let Some(line) = line.strip_suffix(b"\r\n") else {
            return Err(invalid(format!(
                "malformed message header {:?}",
                String::from_utf8_lossy(&line)
            )));
        };
        if line.is_empty() {
            break;
        }
        let line = String::from_utf8_lossy(line);
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid(format!("malformed message header {line:?}")));
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| invalid(format!("bad Content-Length {:?}", value.trim())))?;
            if n > MAX_MESSAGE_BYTES {
                return Err(invalid(format!(
                    "a message of {n} bytes is larger than the {MAX_MESSAGE_BYTES} bytes nidos lsp reads"
                )));
            }
            size = Some(n);
        }
    }
    let size = size.ok_or_else(|| invalid("a message header without Content-Length".to_owned()))?;
    let mut body = vec![0; size];
    inp.read_exact(&mut body)?;
    Ok(Some(body))
}

/// A connection over standard input and output, and the threads that move its messages
/// (join them after the server returns: the reader's error, if any, is the client's).
pub fn stdio() -> (Connection, Threads) {
    let (to_server, from_client) = crossbeam_channel::bounded::<Message>(0);
    let (to_client, from_server) = crossbeam_channel::bounded::<Message>(0);
    let reader = thread::spawn(move || -> io::Result<()> {
        let stdin = io::stdin();
        let mut inp = stdin.lock();
        while let Some(body) = read_body(&mut inp)? {
            let msg: Message = serde_json::from_slice(&body)
                .map_err(|e| invalid(format!("a message that is not JSON-RPC: {e}")))?;
            let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
            if to_server.send(msg).is_err() || exit {
                break;
            }
        }
        Ok(())
    });
    let writer = thread::spawn(move || -> io::Result<()> {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        for msg in from_server {
            // lsp-server's framing of an outgoing message (it adds `"jsonrpc": "2.0"`).
            msg.write(&mut out)?;
        }
        Ok(())
    });
    (
        Connection {
            sender: to_client,
            receiver: from_client,
        },
        Threads { reader, writer },
    )
}

pub struct Threads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Waits for both threads; the reader's error first.
    pub fn join(self) -> io::Result<()> {
        let r = self
            .reader
            .join()
            .unwrap_or_else(|_| Err(invalid("the reader stopped".to_owned())));
        let w = self
            .writer
            .join()
            .unwrap_or_else(|_| Err(invalid("the writer stopped".to_owned())));
        r.and(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_framed_and_bounded() {
        let mut inp = io::Cursor::new(b"Content-Length: 2\r\nX: y\r\n\r\n{}".to_vec());
        assert_eq!(read_body(&mut inp).unwrap().unwrap(), b"{}");
        assert!(read_body(&mut inp).unwrap().is_none());
        let mut huge = io::Cursor::new(b"Content-Length: 99999999999\r\n\r\n{}".to_vec());
        assert!(read_body(&mut huge)
            .unwrap_err()
            .to_string()
            .contains("larger than"));
        let mut none = io::Cursor::new(b"X: 1\r\n\r\n{}".to_vec());
        assert!(read_body(&mut none).is_err());
        let mut bare = io::Cursor::new(b"garbage\n".to_vec());
        assert!(read_body(&mut bare).is_err());
    }
}
