//! Paged lists (client-go's `tools/pager`): pages are fetched and joined into one list.

use kube::core::ObjectList;

use crate::lister_watcher::{Error, ListOptions, ListerWatcher};

/// The page size used when the caller does not set one.
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

/// The joined pages of a list.
pub(crate) struct PagedList<K: Clone> {
    /// All items; the list metadata is the first page's (its resource version).
    pub(crate) list: ObjectList<K>,
    /// Whether more than one page was fetched.
    pub(crate) paginated: bool,
}

/// Lists with `options`, following continue tokens. A request without a limit uses
/// `page_size` (`None`: unpaginated). If a continuation page fails with 410 Expired and
/// `full_list_if_expired` is set, one unpaginated list with the originally requested resource
/// version replaces the partial result.
pub(crate) async fn list_pages<K: Clone + 'static>(
    lister_watcher: &dyn ListerWatcher<K>,
    options: &ListOptions,
    page_size: Option<u32>,
    full_list_if_expired: bool,
) -> Result<PagedList<K>, Error> {
    let mut request = options.clone();
    if request.limit.is_none() {
        request.limit = page_size;
    }
    let first = lister_watcher.list(&request).await?;
    let Some(mut token) = first.metadata.continue_.clone().filter(|t| !t.is_empty()) else {
        return Ok(PagedList {
            list: first,
            paginated: false,
        });
    };
    let mut joined = first;
    loop {
        request.continue_token = Some(token);
        request.resource_version = None;
        request.resource_version_match = None;
        let page = match lister_watcher.list(&request).await {
            Ok(page) => page,
            Err(err) if full_list_if_expired && err.is_expired() => {
                let full = ListOptions {
                    limit: None,
                    continue_token: None,
                    ..options.clone()
                };
                let list = lister_watcher.list(&full).await?;
                return Ok(PagedList {
                    list,
                    paginated: true,
                });
            }
            Err(err) => return Err(err),
        };
        joined.items.extend(page.items);
        match page.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(next) => token = next,
            None => break,
        }
    }
    joined.metadata.continue_ = None;
    Ok(PagedList {
        list: joined,
        paginated: true,
    })
}
