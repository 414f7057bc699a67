//! GET of a collection with `watch=true` (or under `/watch/`): a stream of events.

use std::convert::Infallible;
use std::sync::Arc;

use futures::StreamExt;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use crate::http::request::ResourceRequest;
use crate::http::response::Body;
use crate::http::shape::watch_shape;
use crate::status::ApiError;
use crate::storage::field_labels;
use crate::storage::options::ListOptions;
use crate::storage::watch::WatchStream;

/// Starts the watch the query asks for; each event goes out in the shape `Accept` asks for.
pub(crate) fn watch(request: &ResourceRequest<'_>) -> Result<Response<Body>, ApiError> {
    let shared = request.shared;
    let rt = &request.rt;
    let mut options = ListOptions::parse(request.query, request.ns())?;
    field_labels::check(&shared.lock(), rt, &options.filter.fields)?;
    options.watch = true;
    let current = {
        let shared = shared.clone();
        Arc::new(move || shared.lock().store.resource_version())
    };
    let lag = {
        let (shared, resource) = (shared.clone(), rt.plural.clone());
        Arc::new(move || shared.faults().watch_lag(&resource))
    };
    let stream = WatchStream::start(
        &mut shared.lock(),
        rt,
        &options,
        shared.bookmark_interval,
        current,
    )?
    .with_lag(lag);
    let (shape, content_type) = watch_shape(shared, rt, request.query, request.negotiated)?;
    let lines = futures::stream::unfold(stream, |mut stream| async move {
        stream.next_line().await.map(|line| (line, stream))
    })
    .map(shape)
    .map(|line| Ok::<_, Infallible>(Frame::data(line)));
    let mut response = Response::new(StreamBody::new(lines).boxed_unsync());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(response)
}
