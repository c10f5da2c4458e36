// The generic view widget: everything is in mount.js.
export default { render: renderTree };
