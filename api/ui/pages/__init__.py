"""Dashboard page groups, one module each, registered in :data:`api.ui.PAGE_MODULES`."""
