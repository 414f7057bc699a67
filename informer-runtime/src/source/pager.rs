//! Paged lists (client-go's `tools/pager`): pages are fetched and joined into one list.

use std::sync::Arc;

use kube::core::ListMeta;

use crate::source::{Error, ListOptions, ListerWatcher};

/// The page size used when the caller does not set one.
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

/// The joined pages of a list.
pub(crate) struct PagedList<K> {
    /// All items, prepared page by page.
    pub(crate) items: Vec<Arc<K>>,
    /// The first page's metadata (its resource version).
    pub(crate) metadata: ListMeta,
    /// Whether more than one page was fetched.
    pub(crate) paginated: bool,
}

/// Lists with `options`, following continue tokens, and turns each page's items into shared
/// objects with `prepare` as soon as the page arrives (so decoded pages are not kept until the
/// end, and what `prepare` drops is freed before the next page). A request without a limit
/// uses `page_size` (`None`: unpaginated). If a continuation page fails with 410 Expired and
/// `full_list_if_expired` is set, one unpaginated list with the originally requested resource
/// version replaces the partial result.
pub(crate) async fn list_pages<K: Clone + 'static>(
    lister_watcher: &dyn ListerWatcher<K>,
    options: &ListOptions,
    page_size: Option<u32>,
    full_list_if_expired: bool,
    prepare: &(dyn Fn(K) -> Arc<K> + Send + Sync),
) -> Result<PagedList<K>, Error> {
    let mut request = options.clone();
    if request.limit.is_none() {
        request.limit = page_size;
    }
    let first = lister_watcher.list(&request).await?;
    let mut token = first.metadata.continue_.clone().filter(|t| !t.is_empty());
    let mut joined = PagedList {
        items: first.items.into_iter().map(prepare).collect(),
        metadata: first.metadata,
        paginated: token.is_some(),
    };
    while let Some(continue_token) = token {
        request.continue_token = Some(continue_token);
        request.resource_version = None;
        request.resource_version_match = None;
        let page = match lister_watcher.list(&request).await {
            Ok(page) => page,
            Err(err) if full_list_if_expired && err.is_expired() => {
                // the partial result is freed before the full list is asked for
                drop(joined);
                let full = ListOptions {
                    limit: None,
                    continue_token: None,
                    ..options.clone()
                };
                let list = lister_watcher.list(&full).await?;
                return Ok(PagedList {
                    items: list.items.into_iter().map(prepare).collect(),
                    metadata: list.metadata,
                    paginated: true,
                });
            }
            Err(err) => return Err(err),
        };
        joined.items.extend(page.items.into_iter().map(prepare));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
    }
    joined.metadata.continue_ = None;
    Ok(joined)
}
