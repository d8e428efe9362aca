//! A provider that streams: a small HTTP server on a thread of its own that answers each
//! request with the next scripted reply, written part by part. A [`Part::Gate`] holds the
//! rest of a reply until the test opens it, so a test can see what the client printed
//! before the last words were sent, without any timing. Also: the child's stdout read
//! as it comes.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// A piece of a scripted reply.
#[derive(Clone)]
pub enum Part {
    /// Bytes written (and flushed) as they are.
    Bytes(String),
    /// Wait here until the test opens the gate.
    Gate,
}

/// One scripted reply: its head (status line and headers) and its body's parts; the
/// connection is closed after the last part.
#[derive(Clone)]
pub struct Reply {
    pub head: String,
    pub parts: Vec<Part>,
}

impl Reply {
    /// A `200` of server-sent events made of `parts`.
    pub fn events(parts: Vec<Part>) -> Self {
        Reply {
            head: "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".into(),
            parts,
        }
    }

    /// A whole JSON reply (a server that ignores `stream: true`).
    pub fn whole(body: &Value) -> Self {
        let body = body.to_string();
        Reply {
            head: format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            ),
            parts: vec![Part::Bytes(body)],
        }
    }
}

/// An OpenAI chunk carrying `text`.
pub fn openai_chunk(text: &str) -> Part {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    Part::Bytes(format!("data: {chunk}\n\n"))
}

/// OpenAI's last chunks: the finish reason, the usage chunk (when `usage` is given), `[DONE]`.
pub fn openai_end(usage: Option<(u64, u64)>) -> Part {
    let finish = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let mut out = format!("data: {finish}\n\n");
    if let Some((prompt, completion)) = usage {
        let u = json!({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}});
        out += &format!("data: {u}\n\n");
    }
    out += "data: [DONE]\n\n";
    Part::Bytes(out)
}

/// An Anthropic event.
pub fn anthropic_event(name: &str, data: Value) -> Part {
    Part::Bytes(format!("event: {name}\ndata: {data}\n\n"))
}

/// An Anthropic text delta.
pub fn anthropic_text(text: &str) -> Part {
    anthropic_event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
    )
}

/// A gate a reply waits at until the test opens it.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    /// Lets every reply waiting here go on.
    pub fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }

    fn wait(&self) {
        let mut open = self.0 .0.lock().unwrap();
        while !*open {
            open = self.0 .1.wait(open).unwrap();
        }
    }
}

/// The server: its address, the gate of its replies, and the bodies it received.
pub struct StreamServer {
    pub uri: String,
    pub gate: Gate,
    pub bodies: Arc<Mutex<Vec<Value>>>,
}

impl StreamServer {
    /// Answers request n with `replies[n]` (the last one repeats).
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let (gate, bodies) = (Gate::default(), Arc::new(Mutex::new(Vec::new())));
        let (g, b) = (gate.clone(), bodies.clone());
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                let reply = replies[n.min(replies.len() - 1)].clone();
                let (g, b) = (g.clone(), b.clone());
                std::thread::spawn(move || answer(stream, &reply, &g, &b));
            }
        });
        StreamServer { uri, gate, bodies }
    }

    /// The request bodies received, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// Reads one request (headers, then `content-length` bytes) and writes `reply`.
fn answer(stream: TcpStream, reply: &Reply, gate: &Gate, bodies: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    bodies
        .lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let mut stream = stream;
    let _ = stream.write_all(reply.head.as_bytes());
    let _ = stream.flush();
    for part in &reply.parts {
        match part {
            Part::Bytes(bytes) => {
                let _ = stream.write_all(bytes.as_bytes());
                let _ = stream.flush();
            }
            Part::Gate => gate.wait(),
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The binary, started with `args` in `cwd` and `env`, its stdout read as it comes.
pub struct Watched {
    child: Child,
    chunks: mpsc::Receiver<Vec<u8>>,
    pub seen: String,
}

impl Watched {
    pub fn start(cwd: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_orch"));
        cmd.args(args)
            .current_dir(cwd)
            .env_remove("ORCH_CONFIG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut out = child.stdout.take().unwrap();
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Watched {
            child,
            chunks,
            seen: String::new(),
        }
    }

    /// Reads stdout until it holds `text` (a child that never prints it fails the test
    /// after 60 s, rather than hanging).
    pub fn until(&mut self, text: &str) -> &str {
        while !self.seen.contains(text) {
            match self.chunks.recv_timeout(Duration::from_secs(60)) {
                Ok(chunk) => self.seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => panic!("stdout never showed {text:?}; it showed {:?}", self.seen),
            }
        }
        &self.seen
    }

    /// Waits for the end: the exit code, all of stdout, and stderr.
    pub fn finish(mut self) -> (i32, String, String) {
        while let Ok(chunk) = self.chunks.recv_timeout(Duration::from_secs(60)) {
            self.seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let status = self.child.wait().unwrap();
        (status.code().unwrap_or(-1), self.seen, err)
    }
}
