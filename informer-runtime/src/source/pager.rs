//! Paged lists (client-go's `tools/pager`): pages are fetched one after the other and handed
//! on as they arrive, so a list is never held whole.

use kube::core::ListMeta;

use crate::source::{Error, ListOptions, ListerWatcher};

/// The page size used when the caller does not set one.
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

/// What a paged list hands on, in order.
pub(crate) enum Page<K> {
    /// The items of the next page.
    Items(Vec<K>),
    /// The list starts over (a continuation expired and one full list follows): the pages
    /// handed on so far are not part of the result.
    StartOver,
}

/// How a paged list ended.
pub(crate) struct ListEnd {
    /// The first page's metadata (its resource version), without a continue token.
    pub(crate) metadata: ListMeta,
    /// Whether more than one page was fetched.
    pub(crate) paginated: bool,
    /// The number of items handed on since the last [`Page::StartOver`].
    pub(crate) items: usize,
}

/// Lists with `options`, following continue tokens, and hands each page's items to `on_page`
/// as soon as the page arrives, before the next is asked for. A request without a limit uses
/// `page_size` (`None`: unpaginated). If a continuation fails with 410 Expired and
/// `full_list_if_expired` is set, [`Page::StartOver`] is handed on and one unpaginated list
/// with the originally requested resource version follows.
pub(crate) async fn list_pages<K: Clone + 'static>(
    lister_watcher: &dyn ListerWatcher<K>,
    options: &ListOptions,
    page_size: Option<u32>,
    full_list_if_expired: bool,
    on_page: &mut (dyn FnMut(Page<K>) + Send),
) -> Result<ListEnd, Error> {
    let mut request = options.clone();
    if request.limit.is_none() {
        request.limit = page_size;
    }
    let first = lister_watcher.list(&request).await?;
    let mut token = first.metadata.continue_.clone().filter(|t| !t.is_empty());
    let mut end = ListEnd {
        metadata: first.metadata,
        paginated: token.is_some(),
        items: first.items.len(),
    };
    on_page(Page::Items(first.items));
    while let Some(continue_token) = token {
        request.continue_token = Some(continue_token);
        request.resource_version = None;
        request.resource_version_match = None;
        let page = match lister_watcher.list(&request).await {
            Ok(page) => page,
            Err(err) if full_list_if_expired && err.is_expired() => {
                on_page(Page::StartOver);
                let full = ListOptions {
                    limit: None,
                    continue_token: None,
                    ..options.clone()
                };
                let list = lister_watcher.list(&full).await?;
                end.metadata = list.metadata;
                end.items = list.items.len();
                on_page(Page::Items(list.items));
                break;
            }
            Err(err) => return Err(err),
        };
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        end.items += page.items.len();
        on_page(Page::Items(page.items));
    }
    end.metadata.continue_ = None;
    Ok(end)
}
