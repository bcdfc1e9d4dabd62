//! sdk011 runs one fixed scenario through the TCP client of the released
//! Iggy Rust SDK 0.11.0 (the SDK of Iggy server 0.9.0, binary protocol
//! 0.11.0) against HOST:PORT, so that a recording peer can keep the frames
//! the SDK writes. Every input is fixed; the Go test in the parent folder
//! (scenario.go) holds the same values and must change with this file.
//!
//! Usage: sdk011 HOST:PORT

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;

use iggy::prelude::*;

const STREAM: &str = "oracle-stream";
const TOPIC: &str = "oracle-topic";
const PARTITIONS: u32 = 3;
/// One hour, in microseconds.
const MESSAGE_EXPIRY_MICROS: u64 = 3_600_000_000;
/// 1 GiB.
const MAX_TOPIC_SIZE_BYTES: u64 = 1 << 30;
/// Every message's origin timestamp (µs since the epoch), fixed instead of
/// the builder's clock reading so that the batches are the same every run.
const ORIGIN_TIMESTAMP: u64 = 1_760_000_000_000_000;
const KEY: &str = "order-42";
const CONSUMER_ID: u32 = 7;
const POLL_PARTITION: u32 = 1;
const POLL_COUNT: u32 = 10;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(addr) = std::env::args().nth(1) else {
        eprintln!("usage: sdk011 HOST:PORT");
        return ExitCode::from(2);
    };
    match run(&addr).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("sdk011: {err}");
            ExitCode::FAILURE
        }
    }
}

/// One send of the scenario: how it is partitioned, the first message id
/// and how many messages it carries.
struct Send {
    label: &'static str,
    partitioning: Partitioning,
    first_id: u128,
    count: u32,
}

async fn run(addr: &str) -> Result<(), String> {
    let client = TcpClient::create(Arc::new(TcpClientConfig {
        server_address: addr.to_owned(),
        reconnection: TcpClientReconnectionConfig {
            enabled: false,
            ..TcpClientReconnectionConfig::default()
        },
        nodelay: true,
        ..TcpClientConfig::default()
    }))
    .map_err(|e| format!("creating the client: {e}"))?;
    Client::connect(&client)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    client.ping().await.map_err(|e| format!("ping: {e}"))?;
    let me = client
        .login_user("iggy", "iggy")
        .await
        .map_err(|e| format!("login: {e}"))?;
    println!("logged in as user {}", me.user_id);

    let stream = Identifier::named(STREAM).map_err(|e| e.to_string())?;
    let topic = Identifier::named(TOPIC).map_err(|e| e.to_string())?;
    let found = client
        .get_stream(&stream)
        .await
        .map_err(|e| format!("get stream: {e}"))?;
    println!("stream before create: {}", found.is_some());
    let created = client
        .create_stream(STREAM)
        .await
        .map_err(|e| format!("create stream: {e}"))?;
    println!("created stream {} ({})", created.id, created.name);
    let found = client
        .get_topic(&stream, &topic)
        .await
        .map_err(|e| format!("get topic: {e}"))?;
    println!("topic before create: {}", found.is_some());
    let options = TopicCreateOptions {
        partitions_count: Some(PARTITIONS),
        message_expiry: Some(IggyExpiry::from(MESSAGE_EXPIRY_MICROS)),
        max_topic_size: Some(MaxTopicSize::from(MAX_TOPIC_SIZE_BYTES)),
        ..TopicCreateOptions::default()
    };
    let created = client
        .create_topic(&stream, TOPIC, &options)
        .await
        .map_err(|e| format!("create topic: {e}"))?;
    println!(
        "created topic {} ({}), {} partitions",
        created.id, created.name, created.partitions_count
    );
    let read = client
        .get_topic(&stream, &topic)
        .await
        .map_err(|e| format!("get topic: {e}"))?
        .ok_or("the created topic is missing")?;
    println!(
        "topic {}: {} partitions, expiry {}, max size {}",
        read.name, read.partitions_count, read.message_expiry, read.max_topic_size
    );

    let sends = [
        Send {
            label: "partition",
            partitioning: Partitioning::partition_id(POLL_PARTITION),
            first_id: 1001,
            count: 3,
        },
        Send {
            label: "balanced",
            partitioning: Partitioning::balanced(),
            first_id: 2001,
            count: 2,
        },
        Send {
            label: "key",
            partitioning: Partitioning::messages_key_str(KEY).map_err(|e| e.to_string())?,
            first_id: 3001,
            count: 2,
        },
    ];
    for send in &sends {
        let mut messages = messages(send)?;
        let receipt = client
            .send_messages(&stream, &topic, &send.partitioning, &mut messages)
            .await
            .map_err(|e| format!("send ({}): {e}", send.label))?;
        for c in &receipt.confirmations {
            println!(
                "sent ({}): partition {} base offset {}",
                send.label, c.partition_id, c.base_offset
            );
        }
    }

    let consumer = Consumer::new(Identifier::numeric(CONSUMER_ID).map_err(|e| e.to_string())?);
    let polled = client
        .poll_messages(
            &stream,
            &topic,
            Some(POLL_PARTITION),
            &consumer,
            &PollingStrategy::offset(0),
            POLL_COUNT,
            false,
        )
        .await
        .map_err(|e| format!("poll: {e}"))?;
    println!(
        "polled partition {}: {} messages",
        polled.partition_id,
        polled.messages.len()
    );
    for m in &polled.messages {
        println!(
            "  offset {} id {} {:?} headers {}",
            m.header.offset,
            m.header.id,
            String::from_utf8_lossy(&m.payload),
            m.user_headers.as_ref().map_or(0, |h| h.len())
        );
    }
    Client::shutdown(&client)
        .await
        .map_err(|e| format!("shutdown: {e}"))?;
    Ok(())
}

/// The messages of one send: ids from first_id on, payload "<label>-<i>",
/// and five user headers of different kinds.
fn messages(send: &Send) -> Result<Vec<IggyMessage>, String> {
    (0..send.count)
        .map(|i| {
            let mut headers = BTreeMap::new();
            headers.insert(
                key("source")?,
                HeaderValue::from_str("fluss").map_err(|e| e.to_string())?,
            );
            headers.insert(key("seq")?, HeaderValue::from(u64::from(i)));
            headers.insert(key("valid")?, HeaderValue::from(true));
            headers.insert(key("delta")?, HeaderValue::from(-5_i32));
            headers.insert(
                key("raw")?,
                HeaderValue::try_from(vec![0xca, 0xfe, i as u8]).map_err(|e| e.to_string())?,
            );
            let mut m = IggyMessage::builder()
                .id(send.first_id + u128::from(i))
                .payload(format!("{}-{i}", send.label).into())
                .user_headers(headers)
                .build()
                .map_err(|e| e.to_string())?;
            m.header.origin_timestamp = ORIGIN_TIMESTAMP;
            Ok(m)
        })
        .collect()
}

fn key(name: &str) -> Result<HeaderKey, String> {
    HeaderKey::from_str(name).map_err(|e| e.to_string())
}
